select count(*) from singer
select count(*) from singer
select name, country, age from singer order by age desc
select name, country, age from singer order by age desc
select avg(age), min(age), max(age) from singer where country = 'France'
select avg(age), min(age), max(age) from singer where country = "France"
select song_name, song_release_year from singer order by age asc limit 1
select song_name, song_release_year from singer order by age asc limit 1
select distinct country from singer where age > 20
select distinct country from singer where age > 20
select country, count(*) from singer group by country
select country, count(*) from singer group by country
select song_name from singer where age > (select avg(age) from singer)
select song_name from singer where age > (select avg(age) from singer)
select location, name from stadium where capacity between 5000 and 10000
select location, name from stadium where capacity between 5000 and 10000
select max(capacity), avg(capacity) from stadium
select avg(capacity), max(capacity) from stadium
select name, capacity from stadium order by average desc limit 1
select name, capacity from stadium order by average desc limit 1
select count(*) from concert where year = 2014 or year = 2015
select count(*) from concert where year = 2014 or year = 2015
select stadium.name, count(*) from stadium join concert on stadium.stadium_id = concert.stadium_id group by concert.stadium_id
select stadium.name, count(*) from stadium join concert on stadium.stadium_id = concert.stadium_id group by stadium.stadium_id
select stadium.name, stadium.capacity from stadium join concert on stadium.stadium_id = concert.stadium_id where concert.year >= 2014 group by concert.stadium_id order by count(*) desc limit 1
select stadium.name, stadium.capacity from stadium join concert on stadium.stadium_id = concert.stadium_id where concert.year > 2013 group by concert.stadium_id order by count(*) desc limit 1
select year from concert group by year order by count(*) desc limit 1
select year from concert group by year order by count(*) desc limit 1
select name from stadium where stadium_id not in (select stadium_id from concert)
select name from stadium where stadium_id not in (select stadium_id from concert)
select country from singer where age > 40 intersect select country from singer where age < 30
select name from stadium except select stadium.name from stadium join concert on stadium.stadium_id = concert.stadium_id where concert.year = 2014
select name from stadium except select stadium.name from stadium join concert on stadium.stadium_id = concert.stadium_id where concert.year = 2014
select concert.concert_name, concert.theme, count(*) from singer_in_concert join concert on singer_in_concert.concert_id = concert.concert_id group by concert.concert_name
select concert.concert_name, concert.theme, count(*) from singer_in_concert join concert on singer_in_concert.concert_id = concert.concert_id group by concert.concert_name
select singer.name, count(*) from singer_in_concert join singer on singer_in_concert.singer_id = singer.singer_id group by singer.name
select singer.name, count(*) from singer join singer_in_concert on singer.singer_id = singer_in_concert.singer_id group by singer.name
select singer.name from singer_in_concert join concert on singer_in_concert.concert_id = concert.concert_id join singer on singer_in_concert.singer_id = singer.singer_id where concert.year = 2014
select singer.name from singer join singer_in_concert on singer.singer_id = singer_in_concert.singer_id join concert on singer_in_concert.concert_id = concert.concert_id where concert.year = 2014
select name, country from singer where song_name like "%hey%"
select name, country from singer where song_name like '%hey%'
select stadium.name, stadium.location from stadium join concert on stadium.stadium_id = concert.stadium_id where concert.year = 2014 intersect select stadium.name, stadium.location from stadium join concert on stadium.stadium_id = concert.stadium_id where concert.year = 2015
select stadium.name, stadium.location from stadium join concert on stadium.stadium_id = concert.stadium_id where concert.year = 2014 intersect select stadium.name, stadium.location from stadium join concert on stadium.stadium_id = concert.stadium_id where concert.year = 2015
select count(*) from stadium join concert on stadium.stadium_id = concert.stadium_id where stadium.capacity = (select max(capacity) from stadium)
select count(*) from concert join stadium on concert.stadium_id = stadium.stadium_id where stadium.capacity = (select max(capacity) from stadium)
select count(*) from pets where weight > 10
select count(*) from pets where weight > 10
select weight from pets where pettype = 'dog' order by pet_age limit 1
select weight from pets order by pet_age limit 1
select max(weight), pettype from pets group by pettype
select pettype, max(weight) from pets group by pettype
select count(*) from student join has_pet on student.stuid = has_pet.stuid join pets on has_pet.petid = pets.petid where student.age > 20
select count(*) from student join has_pet on student.stuid = has_pet.stuid join pets on has_pet.petid = pets.petid where student.age > 20
select count(*) from student join has_pet on student.stuid = has_pet.stuid join pets on has_pet.petid = pets.petid where student.sex = "F" and pets.pettype = "dog"
select count(*) from student join has_pet on student.stuid = has_pet.stuid join pets on has_pet.petid = pets.petid where student.sex = "F" and pets.pettype = "dog"
select count(distinct pettype) from pets
select count(distinct pettype) from pets
select distinct student.fname from student join has_pet on student.stuid = has_pet.stuid join pets on has_pet.petid = pets.petid where pets.pettype = "cat" or pets.pettype = "dog"
select distinct student.fname from student join has_pet on student.stuid = has_pet.stuid join pets on has_pet.petid = pets.petid where pets.pettype = "cat" or pets.pettype = "dog"
select student.fname from student join has_pet on student.stuid = has_pet.stuid join pets on has_pet.petid = pets.petid where pets.pettype = "cat" intersect select student.fname from student join has_pet on student.stuid = has_pet.stuid join pets on has_pet.petid = pets.petid where pets.pettype = "dog"
select student.fname from student join has_pet on student.stuid = has_pet.stuid join pets on has_pet.petid = pets.petid where pets.pettype = "cat" intersect select student.fname from student join has_pet on student.stuid = has_pet.stuid join pets on has_pet.petid = pets.petid where pets.pettype = "dog"
select major, age from student where stuid not in (select has_pet.stuid from has_pet join pets on has_pet.petid = pets.petid where pets.pettype = "cat")
select major, age from student where stuid not in (select has_pet.stuid from has_pet join pets on has_pet.petid = pets.petid where pets.pettype = "cat")
select stuid from student except select stuid from has_pet join pets on has_pet.petid = pets.petid where pets.pettype = "cat"
select stuid from student except select stuid from has_pet join pets on has_pet.petid = pets.petid where pets.pettype = "cat"
select fname, age from student where stuid in (select stuid from has_pet join pets on has_pet.petid = pets.petid where pets.pettype = "dog" except select stuid from has_pet join pets on has_pet.petid = pets.petid where pets.pettype = "cat")
select student.fname from student join has_pet on student.stuid = has_pet.stuid join pets on has_pet.petid = pets.petid where pets.pettype = "dog" except select student.fname from student join has_pet on student.stuid = has_pet.stuid join pets on has_pet.petid = pets.petid where pets.pettype = "cat"
select pettype, weight from pets order by pet_age limit 1
select pettype, weight from pets order by pet_age limit 1
select petid, weight from pets where pet_age > 1
select petid, weight from pets where pet_age > 1
select pettype, avg(pet_age), max(pet_age) from pets group by pettype
select pettype, avg(pet_age), max(pet_age) from pets group by pettype
select pettype, avg(weight) from pets group by pettype
select pettype, avg(weight) from pets group by pettype
select distinct student.fname, student.age from student join has_pet on student.stuid = has_pet.stuid
select distinct student.fname, student.age from student join has_pet on student.stuid = has_pet.stuid
select has_pet.petid from has_pet join student on has_pet.stuid = student.stuid where student.lname = "Smith"
select has_pet.petid from has_pet join student on has_pet.stuid = student.stuid where student.lname = "Smith"
select count(*), stuid from has_pet group by stuid
select count(*), student.stuid from student join has_pet on student.stuid = has_pet.stuid group by student.stuid
select student.fname, student.sex from student join has_pet on student.stuid = has_pet.stuid group by has_pet.stuid having count(*) > 1
select student.fname, student.sex from student join has_pet on student.stuid = has_pet.stuid group by has_pet.stuid having count(*) > 1
select student.lname from student join has_pet on student.stuid = has_pet.stuid join pets on has_pet.petid = pets.petid where pets.pet_age = 3
select student.lname from student join has_pet on student.stuid = has_pet.stuid join pets on has_pet.petid = pets.petid where pets.pet_age = 3
select avg(age) from student where stuid not in (select stuid from has_pet)
select avg(age) from student where stuid not in (select stuid from has_pet)
select count(*) from continents
select count(*) from continents
select continents.continent, countries.countryname, count(*) from continents join countries on continents.continent = countries.continent group by continents.continent
select continents.continent, countries.countryname, count(*) from continents join countries on continents.continent = countries.continent group by continents.continent
select count(*) from countries
select count(*) from countries
select car_makers.fullname, car_makers.id, count(*) from car_makers join model_list on car_makers.id = model_list.maker group by car_makers.id
select car_makers.fullname, car_makers.id, count(*) from car_makers join model_list on car_makers.id = model_list.maker group by car_makers.id
select car_names.model from cars_data join car_names on cars_data.id = car_names.makeid order by cars_data.horsepower limit 1
select car_names.model from cars_data join car_names on cars_data.id = car_names.makeid order by cars_data.horsepower limit 1
select car_names.model from cars_data join car_names on cars_data.id = car_names.makeid where cars_data.weight < (select avg(weight) from cars_data)
select car_names.model from cars_data join car_names on cars_data.id = car_names.makeid where cars_data.weight < (select avg(weight) from cars_data)
select distinct car_makers.maker from car_makers join cars_data on car_makers.id = cars_data.id where cars_data.year = 1970
select distinct car_makers.maker from car_makers join car_names on car_makers.id = car_names.makeid join cars_data on cars_data.id = car_names.makeid where cars_data.year = 1970
select car_names.make, cars_data.year from cars_data join car_names on cars_data.id = car_names.makeid order by cars_data.year limit 1
select car_makers.maker, cars_data.year from cars_data join model_list on cars_data.id = model_list.modelid join car_makers on cars_data.id = car_makers.id order by cars_data.year limit 1
select distinct car_names.model from car_names join cars_data on car_names.makeid = cars_data.id where cars_data.year > 1980
select distinct model_list.model from model_list join cars_data on model_list.modelid = cars_data.id where cars_data.year > 1980
select continents.continent, count(*) from continents join car_makers on continents.contid = car_makers.country group by continents.continent
select countries.countryname, count(*) from countries join car_makers on countries.countryid = car_makers.country group by countries.continent
select countries.countryname from car_makers join countries on car_makers.country = countries.countryid group by countries.countryname order by count(*) desc limit 1
select countries.countryname from car_makers join countries on car_makers.country = countries.countryid group by countries.countryname order by count(*) desc limit 1
select count(*), car_makers.fullname from car_makers join model_list on car_makers.id = model_list.maker group by car_makers.id
select count(*), car_makers.id, car_makers.fullname from car_makers join model_list on car_makers.id = model_list.maker group by car_makers.id
select cars_data.accelerate from car_names join cars_data on car_names.makeid = cars_data.id where car_names.make = "amc hornet" and car_names.make = "sw"
select cars_data.accelerate from car_names join cars_data on car_names.makeid = cars_data.id where car_names.make = "amc hornet" and car_names.make = "sw"
select count(*) from car_makers join countries on car_makers.country = countries.countryid where countries.countryname = "france"
select count(*) from car_makers join countries on car_makers.country = countries.countryid where countries.countryname = "France"
select count(*) from countries join car_makers on countries.countryid = car_makers.country where countries.countryname = "USA"
select count(*) from car_makers where country = 'USA'
select avg(mpg) from cars_data where cylinders = 4
select avg(mpg) from cars_data where cylinders = 4
select min(weight) from cars_data where cylinders = 8 and year = 1974
select min(weight) from cars_data where cylinders = 8 and year = 1974
select maker, model from model_list
select maker, model from model_list
select countries.countryname, car_makers.country from car_makers join countries on car_makers.country = countries.countryid
select countries.countryname, car_makers.country from countries join car_makers on countries.countryid = car_makers.country
select count(*) from cars_data where horsepower > 150
select count(*) from cars_data where horsepower > 150
select avg(weight), year from cars_data group by year
select avg(weight), year from cars_data group by year
select countries.countryname from car_makers join countries on car_makers.country = countries.countryid join continents on continents.continent =
select countries.countryname from car_makers join countries on car_makers.country = countries.countryid group by countries.countryname having count(*) >= 3
select max(horsepower), car_names.make from cars_data join car_names on cars_data.id = car_names.model where cars_data.cylinders = 3
select car_names.make, max(cars_data.horsepower) from cars_data join car_names on cars_data.cylinders = car_names.makeid where cars_data.cylinders = 3
select model_list.model from cars_data join model_list on cars_data.id = model_list.modelid group by model_list.model order by sum(cars_data.mpg) desc limit 1
select car_names.model from cars_data join car_names on cars_data.id = car_names.makeid order by cars_data.mpg desc limit 1
select avg(horsepower) from cars_data where year < 1980
select avg(horsepower) from cars_data where year < 1980
select avg(edispl) from cars_data join model_list on cars_
select avg(edispl) from cars_data
select max(accelerate), cylinders from cars_data group by cylinders
select max(accelerate), cylinders from cars_data group by cylinders
select model from car_names group by model order by count(*) desc limit 1
select model from model_list group by model order by count(*) desc limit 1
select count(*) from cars_data where cylinders > 4
select count(*) from cars_data where cylinders > 4
select count(*) from cars_data where year = 1980
select count(*) from cars_data where year = 1980
select count(*) from car_makers join model_list on car_makers.id = model_list.maker where car_makers.fullname = "American motor Company"
select count(*) from car_makers join model_list on car_makers.id = model_list.maker where car_makers.fullname = "American motor Company"
select car_makers.fullname, car_makers.id from car_makers join model_list on car_makers.id = model_list.maker group by car_makers.id having count(*) > 3
select car_makers.fullname, model_list.maker from car_makers join model_list on car_makers.id = model_list.maker group by model_list.maker having count(*) > 3
select distinct model_list.model from model_list join car_makers on model_list.maker = car_makers.id join cars_data on cars_data.id = car_makers.id where car_makers.fullname = 'General Motors' or cars_data.weight > 3500
select distinct model_list.model from model_list join car_makers on model_list.maker = car_makers.id join cars_data on cars_data.id = car_makers.id where car_makers.fullname = 'General Motors' or cars_data.weight > 3500
select year from cars_data where weight <= 3000 and weight <= 4000
select distinct year from cars_data where weight < 4000 intersect select distinct year from cars_data where weight > 3000
select horsepower from cars_data order by accelerate desc limit 1
select horsepower from cars_data order by accelerate desc limit 1
select cylinders from cars_data where model = 'Volvo' order by accelerate limit 1;.030 sec
select cars_data.cylinders from cars_data join model_list on cars_data.id = model_list.modelid where model_list.model = "Volvo" order by cars_data.accelerate limit 1
select count(*) from cars_data where accelerate > (select max(accelerate) from cars_data)
select count(*) from cars_data where accelerate > (select max(accelerate) from cars_data)
select count(*) from (select country from car_makers group by country having count(*) > 2)
select count(*) from (select country from car_makers group by country having count(*) > 2)
select count(*) from cars_data where cylinders > 6
select count(*) from cars_data where cylinders > 6
select car_names.model from cars_data join car_names on cars_data.id = car_names.model where cars_data.cylinders = 4 order by cars_data.horsepower desc limit 1
select car_names.model from cars_data join car_names on cars_data.id = car_names.model where cars_data.cylinders = 4 order by horsepower desc limit 1
select car_names.makeid, car_names.make from cars_data join car_names on cars_data.id = car_names.makeid where cars_data.horsepower > (select min(horsepower) from cars_data) and car_names.makeid not in (select id from cars_data where cylinders > 3)
select car_names.makeid, car_names.make from cars_data join car_names on cars_data.id = car_names.makeid where cars_data.cylinders < 4
select max(mpg) from cars_data where cylinders = 8 or year < 1980
select max(mpg) from cars_data where cylinders = 8 or year < 1980
select
select distinct model_list.model from model_list join cars_data on model_list.modelid = cars_data.id join car_makers on model_list.maker = car_makers.id where car_makers.fullname!= "Ford Motor Company" and cars_data.weight < 3500
select countryname from countries except select countries.countryname from countries join car_makers on countries.countryid = car_makers.country
select countryname from countries except select countries.countryname from countries join car_makers on countries.countryid = car_makers.country
select car_makers.id, car_makers.maker from car_makers join model_list on car_makers.id = model_list.maker group by car_makers.id having count(*) >= 2 intersect select car_makers.id, car_makers.maker from car_makers join model_list on car_makers.id = model_list.maker group by car_makers.id having count(*) > 3
select car_makers.id, car_makers.maker from car_makers join model_list on car_makers.id = model_list.maker group by car_makers.id having count(*) >= 2 intersect select car_makers.id, car_makers.maker from car_makers join model_list on car_makers.id = model_list.maker group by car_makers.id having count(*) > 3
select countries.countryid, countries.countryname from car_makers join countries on car_makers.country = countries.countryid group by countries.countryid having count(*) > 3 union select countries.countryid, countries.countryname from car_makers join countries on car_makers.country = countries.countryid where car_makers.maker = "Fiat"
select countries.countryid, countries.countryname from countries join car_makers on countries.countryid = car_makers.country where car_makers.maker = "Fiat" group by countries.countryid having count(*) > 3 union select countries.countryid, countries.countryname from countries join model_list on countries.countryid = model_list.maker where model_list.model = "Fiat"
select country from airlines where airline = 'JetBlue Airways'
select country from airlines where airline = 'JetBlue Airways'
select abbreviation from airlines where airline = 'JetBlue Airways'
select abbreviation from airlines where airline = 'JetBlue Airways'
select airline, abbreviation from airlines where country = 'USA'
select airline, abbreviation from airlines where country = 'USA'
select airportcode, airportname from airports where city = 'Anthony'
select airportcode, airportname from airports where city = 'Anthony'
select count(*) from airlines
select count(*) from airlines
select count(*) from airports
select count(*) from airports
select count(*) from flights
select count(*) from flights
select airline from airlines where abbreviation = 'UAL'
select airline from airlines where abbreviation = 'UAL'
select count(*) from airlines where country = 'USA'
select count(*) from airlines where country = 'USA'
select city, country from airports where airportname = 'Alton'
select city, country from airports where airportname = 'Alton'
select airportname from airports where airportcode = 'AKO'
select airportname from airports where airportcode = 'AKO'
select airportname from airports where city = 'Aberdeen'
select airportname from airports where city = 'Aberdeen'
select count(*) from flights where destairport = 'APG'
select count(*) from flights where destairport = "APG"
select count(*) from airports join flights on airports.airportcode = flights.destairport where airports.airportcode = 'ATO'
select count(*) from airports join flights on airports.airportcode = flights.sourceairport where airports.airportcode = 'ATO'
select count(*) from airports join flights on airports.airportcode = flights.sourceairport where airports.city = 'Aberdeen'
select count(*) from airports join flights on airports.airportcode = flights.sourceairport where airports.city = 'Aberdeen'
select count(*) from airports join flights on airports.airportcode = flights.destairport where airports.city = 'Aberdeen'
select count(*) from airports join flights on airports.airportcode = flights.destairport where airports.city = 'Aberdeen'
select count(*) from flights where sourceairport = 'Aberdeen' and destairport = 'Ashley'
select count(*) from flights join airports on flights.sourceairport = airports.airportcode where airports.city = 'Aberdeen' and airports.airportname = 'Ashley'
select count(*) from airlines join flights on airlines.uid = flights.airline where airlines.airline = "JetBlue Airways"
select count(*) from airlines join flights on airlines.uid = flights.airline where airlines.airline = 'JetBlue Airways'
select count(*) from flights join airports on flights.sourceairport = airports.airportcode join airlines on flights.airline = airlines.uid where airports.airportcode = 'ASY' and airlines.airline = 'United Airlines'
select count(*) from flights join airports on flights.destairport = airports.airportcode join airlines on flights.airline = airlines.uid where airports.airportcode = "ASY" and airlines.airline = "United Airlines"
select count(*) from flights join airports on flights.sourceairport = airports.airportcode join airlines on flights.airline = airlines.uid where airports.airportcode = 'AHD' and airlines.airline = 'United Airlines'
select count(*) from airlines join flights on airlines.uid = flights.airline where flights.sourceairport = 'AHD' and airlines.airline = 'United Airlines'
select count(*) from airports join flights on airports.airportcode = flights.sourceairport join airlines on flights.airline = airlines.uid where airports.city = 'Aberdeen' and airlines.airline = 'United Airlines'
select count(*) from airports join flights on airports.airportcode = flights.destairport join airlines on flights.airline = airlines.uid where airports.city = 'Aberdeen' and airlines.airline = 'United Airlines'
select airports.city from airports join flights on airports.airportcode = flights.sourceairport group by airports.city order by count(*) desc limit 1
select airports.city from airports join flights on airports.airportcode = flights.destairport group by airports.city order by count(*) desc limit 1
select airports.city from airports join flights on airports.airportcode = flights.destairport group by airports.city order by count(*) desc limit 1
select airports.city from airports join flights on airports.airportcode = flights.sourceairport group by flights.sourceairport order by count(*) desc limit 1
select airports.airportcode from airports join flights on airports.airportcode = flights.sourceairport group by flights.sourceairport order by count(*) desc limit 1
select airports.airportcode from airports join flights on airports.airportcode = flights.sourceairport group by flights.sourceairport order by count(*) desc limit 1
select airportcode from airports group by airportcode order by count(*) limit 1
select airportcode from airports group by airportcode order by count(*) limit 1
select airlines.airline from airlines join flights on airlines.uid = flights.airline group by airlines.airline order by count(*) desc limit 1
select airlines.airline from airlines join flights on airlines.uid = flights.airline group by airlines.airline order by count(*) desc limit 1
select airlines.abbreviation, airlines.country from airlines join flights on airlines.uid = flights.airline group by flights.airline order by count(*) limit 1
select airlines.abbreviation, airlines.country from airlines join flights on airlines.uid = flights.airline group by airlines.uid order by count(*) limit 1
select airlines.airline from airlines join flights on airlines.uid = flights.airline where flights.destairport = 'AHD'
select airlines.airline from airlines join flights on airlines.uid = flights.airline where flights.sourceairport = 'AHD'
select airlines.airline from airlines join flights on airlines.uid = flights.airline where flights.destairport = 'AHD'
select airlines.airline from airlines join flights on airlines.uid = flights.airline where flights.destairport = 'AHD'
select airlines.airline from airlines join flights on airlines.uid = flights.airline where flights.sourceairport = 'APG' intersect select airlines.airline from airlines join flights on airlines.uid = flights.airline where flights.sourceairport = 'CVO'
select airlines.airline from airlines join flights on airlines.uid = flights.airline where flights.destairport = 'APG' intersect select airlines.airline from airlines join flights on airlines.uid = flights.airline where flights.sourceairport = 'CVO'
select airlines.airline from airlines join flights on airlines.uid = flights.airline where flights.sourceairport = "CVO" except select airlines.airline from airlines join flights on airlines.uid = flights.airline where flights.sourceairport = "APG"
select airlines.airline from airlines join flights on airlines.uid = flights.airline where flights.sourceairport = 'CVO' except select airlines.airline from airlines join flights on airlines.uid = flights.airline where flights.destairport = 'APG'
select airlines.airline from airlines join flights on airlines.uid = flights.airline group by airlines.airline having count(*) >= 10
select airlines.airline from airlines join flights on airlines.uid = flights.airline group by airlines.airline having count(*) >= 10
select airlines.airline from airlines join flights on airlines.uid = flights.airline group by airlines.uid having count(*) < 200
select airlines.airline from airlines join flights on airlines.uid = flights.airline group by airlines.airline having count(*) < 200
select flights.flightno from airlines join flights on airlines.uid = flights.airline where airlines.airline = "United Airlines"
select flights.flightno from airlines join flights on airlines.uid = flights.airline where airlines.airline = 'United Airlines'
select flightno from flights where destairport = 'APG'
select flightno from flights where sourceairport = 'APG'
select flightno from flights where destairport = 'APG'
select flightno from flights where destairport = 'APG'
select flights.flightno from airports join flights on airports.airportcode = flights.sourceairport where airports.city = 'Aberdeen'
select flights.flightno from airports join flights on airports.airportcode = flights.sourceairport where airports.city = 'Aberdeen'
select flights.flightno from airports join flights on airports.airportcode = flights.destairport where airports.city = 'Aberdeen'
select flights.flightno from airports join flights on airports.airportcode = flights.sourceairport where airports.city = 'Aberdeen'
select count(*) from airports join flights on airports.airportcode = flights.sourceairport where airports.city = 'Aberdeen' or airports.city = 'Abilene'
select count(*) from airports join flights on airports.airportcode = flights.sourceairport where airports.city = 'Aberdeen' or airports.city = 'Abilene'
select airportname from airports where airportcode not in (select sourceairport from flights)
select airportname from airports except select airports.airportname from airports join flights on airports.airportcode = flights.sourceairport or flights.destairport = flights.destairport
